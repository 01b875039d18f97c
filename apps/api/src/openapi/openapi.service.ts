import { Injectable } from '@nestjs/common';
import { buildOpenApiDocument } from './openapi.document.js';
import { renderOpenApiPage, type OpenApiPage } from './openapi.page.js';

/** The document and its page, built once at boot: they only change with the code. */
@Injectable()
export class OpenApiService {
  readonly documentJson: string;
  readonly page: OpenApiPage;

  constructor() {
    const document = buildOpenApiDocument();
    this.documentJson = JSON.stringify(document);
    this.page = renderOpenApiPage(document);
  }
}

import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { map, type Observable } from 'rxjs';

export interface Envelope<T> {
  code: 200;
  message: 'success';
  data: T;
  /** Paged lists only: where the next page starts; absent on the last page. */
  next_cursor?: string;
}

/**
 * A list page: `data` keeps the list's contract shape, the cursor rides beside it in the
 * envelope, so clients that ignore paging read the same response as before.
 */
export class Page<T> {
  constructor(
    readonly items: T,
    readonly nextCursor: string | undefined,
  ) {}
}

/** Wraps every successful result in the contract's envelope `{code:200,message:"success",data}`. */
@Injectable()
export class EnvelopeInterceptor<T> implements NestInterceptor<T, Envelope<unknown>> {
  intercept(_context: ExecutionContext, next: CallHandler<T>): Observable<Envelope<unknown>> {
    return next.handle().pipe(
      map((data) =>
        data instanceof Page
          ? {
              code: 200,
              message: 'success',
              data: data.items as unknown,
              ...(data.nextCursor !== undefined && { next_cursor: data.nextCursor }),
            }
          : { code: 200, message: 'success', data },
      ),
    );
  }
}

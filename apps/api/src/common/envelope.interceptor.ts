import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { map, type Observable } from 'rxjs';

export interface Envelope<T> {
  code: 200;
  message: 'success';
  data: T;
}

/** Wraps every successful result in the contract's envelope `{code:200,message:"success",data}`. */
@Injectable()
export class EnvelopeInterceptor<T> implements NestInterceptor<T, Envelope<T>> {
  intercept(_context: ExecutionContext, next: CallHandler<T>): Observable<Envelope<T>> {
    return next.handle().pipe(map((data) => ({ code: 200, message: 'success', data })));
  }
}

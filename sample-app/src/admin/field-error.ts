import { BadRequestException } from '@nestjs/common';

/** A 400 whose body names the offending field, so a client can point at it: `{ ..., message, field }`. */
export function fieldError(field: string, message: string): BadRequestException {
  return new BadRequestException({ statusCode: 400, error: 'Bad Request', message, field });
}

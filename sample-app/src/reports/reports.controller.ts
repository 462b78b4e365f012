import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { RateLimit } from 'nestjs-redis-rate-limit';
import { REPORTS_RULE } from '../config/rule-names.js';

/** What another service asks for: a tenant's report. */
export interface ReportRequest {
  tenant: string;
  kind?: string;
}

/**
 * A microservice route (Nest's TCP transport, beside the HTTP server: see main.ts). The `reports` rule counts per
 * tenant, read from the message's payload (`body:` is the payload on a message, as it is the body on HTTP); a
 * message without a tenant is refused with a 400 RpcException rather than sharing one budget. A refusal reaches the
 * calling service as an RpcException whose error is `{ statusCode: 429, message, retryAfter, retryAfterMs, rule, limit }`.
 * The global guard's default rule (per client IP) does not apply to these messages: the payload has no IP.
 */
@Controller()
export class ReportsController {
  @MessagePattern('reports.generate')
  @RateLimit({ name: REPORTS_RULE, key: 'body:tenant', keyRequired: true })
  generate(@Payload() request: ReportRequest): { tenant: string; kind: string } {
    return { tenant: request.tenant, kind: request.kind ?? 'usage' };
  }
}

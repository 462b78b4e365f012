import { Controller, Get, Param, ParseIntPipe, Query } from '@nestjs/common';
import { API_KEY_RULE, SEARCH_RULE } from '../config/rule-names.js';
import { RateLimit } from 'nestjs-redis-rate-limit';
import { ItemsService, type Item } from './items.service.js';

@Controller('api/items')
export class ItemsController {
  constructor(private readonly items: ItemsService) {}

  /** Only the global guard's default rule: per client IP. */
  @Get()
  list(): readonly Item[] {
    return this.items.list();
  }

  /**
   * The `search` rule on one key for every caller (the backend's own limit, fleet-wide), on top of the default rule per
   * IP. Declared before `:id`, which would take `search` for an id.
   */
  @Get('search')
  @RateLimit({ name: SEARCH_RULE, key: () => 'backend', shared: true })
  search(@Query('q') text = ''): readonly Item[] {
    return this.items.search(String(text));
  }

  /**
   * The `api-key` rule (a token bucket, from config) per X-Api-Key, on top of the default rule per IP; both must
   * admit. Without the header: 400, rather than a budget shared by every caller without a key. A real API would
   * also authenticate the key; here the per-IP default rule is what bounds a caller who invents new keys.
   * `shared`: the budget is the API key's alone (not per route), so an override names the API key as it is.
   */
  @Get(':id')
  @RateLimit({ name: API_KEY_RULE, key: 'header:x-api-key', keyRequired: true, shared: true })
  get(@Param('id', ParseIntPipe) id: number): Item {
    return this.items.get(id);
  }
}

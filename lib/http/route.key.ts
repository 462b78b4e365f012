import type { Type } from '@nestjs/common';
import { Reflector } from '@nestjs/core';

// Nest's own metadata key for a controller's path (`@Controller('users')`).
const PATH_METADATA = 'path';
const reflector = new Reflector();

/**
 * A route's name in store keys: `Controller.handler`, behind the controller's path when it has one
 * (`v2/users:UsersController.list`), so that two controllers of one class name in different modules keep apart.
 */
export function routeName(controller: Type<unknown> | Function, handler: string): string {
  const name = `${controller.name}.${handler}`;
  const path = controllerPath(reflector.get<string | string[] | undefined>(PATH_METADATA, controller));
  return path ? `${path}:${name}` : name;
}

/**
 * The key the guard charges `tracker` under a rule that is not `shared`, on `controller`'s `handler` (the guard's own
 * `generateKey`, not the module's option): what per-key overrides and `reset` name for a per-route rule.
 * `routeKey(ItemsController, 'list', 'ip:203.0.113.7')` is `'items:ItemsController.list|ip:203.0.113.7'` for
 * `@Controller('items')`. A `shared` rule charges the tracker as it is.
 */
export function routeKey(controller: Type<unknown> | Function, handler: string, tracker: string): string {
  return `${routeName(controller, handler)}|${tracker}`;
}

function controllerPath(path: string | string[] | undefined): string {
  return (Array.isArray(path) ? path.join(',') : (path ?? '')).replace(/^\/+|\/+$/g, '');
}

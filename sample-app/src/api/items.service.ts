import { Injectable, NotFoundException } from '@nestjs/common';

export interface Item {
  id: number;
  name: string;
}

/** A fixed catalogue: the API exists to be rate limited. */
const ITEMS: readonly Item[] = [
  { id: 1, name: 'Lua script' },
  { id: 2, name: 'Sorted set' },
  { id: 3, name: 'Token bucket' },
];

@Injectable()
export class ItemsService {
  list(): readonly Item[] {
    return ITEMS;
  }

  /** The items whose name holds `text`, in any case. */
  search(text: string): readonly Item[] {
    const wanted = text.toLowerCase();
    return ITEMS.filter((i) => i.name.toLowerCase().includes(wanted));
  }

  get(id: number): Item {
    const item = ITEMS.find((i) => i.id === id);
    if (!item) throw new NotFoundException(`No item ${id}`);
    return item;
  }
}

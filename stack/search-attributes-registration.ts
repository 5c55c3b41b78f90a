// An external Temporal cluster needs svc's search attributes registered once; the embedded dev
// server gets them from temporal-dev.yml. Registering is idempotent.
import { Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { ALL_SEARCH_ATTRIBUTES } from '../core/search-attributes.ts';

const INDEXED_VALUE_TYPE = {
  KEYWORD: proto.temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
} as const;

export async function registerSearchAttributes(address: string, namespace: string): Promise<void> {
  const connection = await Connection.connect({ address });
  try {
    const existing = await connection.operatorService.listSearchAttributes({ namespace });
    const known = new Set(Object.keys(existing.customAttributes ?? {}));
    const missing = ALL_SEARCH_ATTRIBUTES.filter((key) => !known.has(key.name));
    if (missing.length === 0) return;
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((key) => [key.name, INDEXED_VALUE_TYPE.KEYWORD])),
    });
  } finally {
    await connection.close();
  }
}

/** The `data` service (its port, the interface, is kernel/data-service.ts). */
import type { DataService } from '../../kernel/data-service';
import { lower, type DataContext } from './data-context';

export function dataService(data: DataContext): DataService {
  return {
    tableDefinition: (database, table) => data.storage().getTable(lower(database), lower(table)),
  };
}

/** Reads a Prometheus text exposition (GET /metrics) for the ops suites. */
import { call } from '../helpers/server';

export interface Scrape {
  /** Family name → its TYPE. */
  families: Map<string, string>;
  /** `name{label="value",...}` as written → value. */
  samples: Map<string, number>;
  text: string;
}

export function parseExposition(text: string): Scrape {
  const families = new Map<string, string>();
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.startsWith('# TYPE ')) {
      const [, , name, type] = line.split(' ');
      families.set(name, type);
    } else if (line.length > 0 && !line.startsWith('#')) {
      const space = line.lastIndexOf(' ');
      samples.set(line.slice(0, space), Number(line.slice(space + 1)));
    }
  }
  return { families, samples, text };
}

/** GET /metrics as admin (or `auth`); throws unless 200. */
export async function scrape(http: string, auth: [string, string] | null = ['admin', 'ADMIN']): Promise<Scrape> {
  const reply = await call('GET', `${http}/metrics`, { auth });
  if (reply.status !== 200) throw new Error(`GET /metrics answered ${reply.status}: ${reply.text}`);
  return parseExposition(reply.text);
}

/** The value of one series (`name` or `name{a="b"}`, labels in the order the server writes them); 0 when absent. */
export function valueOf(scrape: Scrape, series: string): number {
  return scrape.samples.get(series) ?? 0;
}

/** The sum of a family's series whose labels include every given pair. */
export function sumOf(scrape: Scrape, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const [series, value] of scrape.samples) {
    const brace = series.indexOf('{');
    const seriesName = brace < 0 ? series : series.slice(0, brace);
    if (seriesName !== name) continue;
    const text = brace < 0 ? '' : series.slice(brace);
    if (Object.entries(labels).every(([key, wanted]) => text.includes(`${key}="${wanted}"`))) sum += value;
  }
  return sum;
}

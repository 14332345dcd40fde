/**
 * The Prometheus text format read back: each sample's name, labels and value, and the sum of the
 * samples of a metric whose labels include the ones asked for (what a PromQL `sum(…{…})` gives).
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /(\w+)="((?:[^"\\]|\\.)*)"/g;

export function samples(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    const m = SAMPLE.exec(line);
    if (!m || line.startsWith('#')) continue;
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(LABEL)].map(([, k, v]) => [k, v]));
    out.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return out;
}

export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number {
  return samples(text)
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((a, s) => a + s.value, 0);
}

/** How much the samples of `name` with `labels` moved between two scrapes. */
export function moved(before: string, after: string, name: string, labels: Record<string, string> = {}): number {
  return metricValue(after, name, labels) - metricValue(before, name, labels);
}

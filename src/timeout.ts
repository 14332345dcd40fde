/**
 * `work`, unless it has not settled within `ms`: then what `late()` returns (or throws). `late`
 * runs once, when the time is up; `work` is left to settle on its own (its rejection handled), the
 * timer never outlives the race. `ms` of 0 or less: no limit.
 */
export function within<T, L = never>(work: Promise<T>, ms: number, late: () => L): Promise<T | L> {
  if (!(ms > 0)) return work;
  work.catch(() => {});
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<L>((resolve, reject) => {
    timer = setTimeout(() => {
      try {
        resolve(late());
      } catch (err) {
        reject(err);
      }
    }, ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

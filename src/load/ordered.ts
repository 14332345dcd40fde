/**
 * The results of `run` over `items` in input order, at most `ahead` of them started and not yet
 * taken: the runs may end in any order (chunks in worker threads), the consumer sees them as one
 * thread would. A run that fails is thrown when its turn comes; the later ones are left to settle.
 * With `ahead` 1 and a synchronous `run`, each item is run only once the previous result is taken.
 */
export async function* ordered<A, T>(items: AsyncIterable<A> | Iterable<A>, run: (item: A) => Promise<T> | T, ahead: number): AsyncGenerator<T> {
  const queue: Promise<T>[] = [];
  try {
    for await (const item of items) {
      const p = Promise.resolve(run(item));
      p.catch(() => {}); // awaited in order below; a failure must not be reported as unhandled first
      queue.push(p);
      if (queue.length >= ahead) yield await queue.shift()!;
    }
    while (queue.length) yield await queue.shift()!;
  } finally {
    queue.length = 0;
  }
}

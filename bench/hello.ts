// The HTTP ceiling: a Fastify hello-world on 127.0.0.1, driven with the same autocannon settings as
// the FHIR server. Usage: node --import tsx bench/hello.ts <port>
import Fastify from 'fastify';

const port = Number(process.argv[2] ?? 18432);
const app = Fastify({ logger: false });
app.get('/hello', async () => ({ hello: 'world' }));
await app.listen({ port, host: '127.0.0.1' });
const close = () => void app.close().then(() => process.exit(0));
process.on('SIGTERM', close);
process.on('SIGINT', close);

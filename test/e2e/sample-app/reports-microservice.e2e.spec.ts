import { Transport, ClientProxyFactory, type ClientProxy } from '@nestjs/microservices';
import { firstValueFrom } from 'rxjs';
import { freePort } from '../../support/redis-server.js';
import { SAMPLE_STORES, sampleAppsOn } from './support/sample-app.js';

/**
 * The sample app's microservice route, as main.ts serves it beside HTTP: `reports.generate` over Nest's TCP transport,
 * 2 per minute per tenant here (RATE_LIMIT_REPORTS_LIMIT), the tenant read from the payload. A client service sees
 * the refusal as an RpcException with the 429 body; the test clock of the testing kit ends the window.
 */
describe.each(SAMPLE_STORES)('the sample app\'s reports.generate message on the %s store', (store) => {
  const apps = sampleAppsOn(store);
  const sample = apps.shared({ RATE_LIMIT_REPORTS_LIMIT: '2', RATE_LIMIT_REPORTS_WINDOW: '1m' });
  let client: ClientProxy;

  beforeAll(async () => {
    const port = await freePort();
    sample().app.connectMicroservice({ transport: Transport.TCP, options: { host: '127.0.0.1', port } }, { inheritAppConfig: true });
    await sample().app.startAllMicroservices();
    client = ClientProxyFactory.create({ transport: Transport.TCP, options: { host: '127.0.0.1', port } });
    await client.connect();
  });
  afterAll(() => client?.close());

  const generate = (payload: object) => firstValueFrom(client.send('reports.generate', payload));

  it('serves 2 reports a minute per tenant, refuses the third with the 429 body, and serves again in the next window', async () => {
    await expect(generate({ tenant: 'acme' })).resolves.toEqual({ tenant: 'acme', kind: 'usage' });
    await expect(generate({ tenant: 'acme', kind: 'billing' })).resolves.toEqual({ tenant: 'acme', kind: 'billing' });
    await expect(generate({ tenant: 'acme' })).rejects.toMatchObject({ statusCode: 429, rule: 'reports', limit: 2 });
    // Another tenant has its own budget.
    await expect(generate({ tenant: 'globex' })).resolves.toEqual({ tenant: 'globex', kind: 'usage' });
    sample().limits.advance('1m');
    await expect(generate({ tenant: 'acme' })).resolves.toEqual({ tenant: 'acme', kind: 'usage' });
  });

  it('refuses a message without a tenant with a 400 RpcException, never one budget for all of them', async () => {
    await expect(generate({ kind: 'usage' })).rejects.toMatchObject({ statusCode: 400, rule: 'reports' });
  });
});

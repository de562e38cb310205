import { TestCluster } from '../helpers/nats-cluster';
import { call } from '../helpers/server';
async function main() {
  const c = await TestCluster.start(1);
  try {
    const r = await call('POST', `${c.nodes[0].http}/engine/api/v1/table/main/claims`, { body: { fields: [{ name: 'k', type: 'string', length: 20 }] } });
    console.log(r.status, r.text);
    console.log(c.nodes[0].mqtt, c.nodes[0].process!.output().split('\n').filter(l => /listening|error|warn/i.test(l)).join('\n'));
  } finally {
    await c.stop();
  }
}
main().catch((e) => { console.error(e); process.exit(1); });

import assert from 'node:assert/strict';
import { CommandBus } from '../../kernel/bus/command-bus';
import type { CommandContext } from '../../kernel/bus/command';
import { EngineError } from '../../kernel/errors';

const ctx: CommandContext = { principal: { account: 'alice', roles: [] }, origin: 'internal' };

function bus(decisions: string[] = []): CommandBus {
  return new CommandBus((context, command, resource) => {
    decisions.push(`${context.principal.account} ${command} ${JSON.stringify(resource)}`);
    if (command === 'thing.forbidden') throw new EngineError('NOT_AUTHORIZED', { account: 'alice', command, resource: 'x' });
  });
}

describe('kernel/bus/command-bus', () => {
  it('validates, authorizes with the resource, then runs the handler', async () => {
    const decisions: string[] = [];
    const commands = bus(decisions);
    commands.register<{ table: string; n?: number }, string>({
      name: 'thing.make',
      params: { type: 'object', required: ['table'], properties: { table: { type: 'string' }, n: { type: 'integer', default: 3 } } },
      resource: (params) => ({ kind: 'table', database: 'main', table: params.table }),
      handler: (params) => `${params.table}:${params.n}`,
    });
    assert.equal(await commands.execute('thing.make', { table: 't' }, ctx), 't:3');
    assert.deepEqual(decisions, ['alice thing.make {"kind":"table","database":"main","table":"t"}']);
    const make = commands.resolve('thing.make');
    assert.equal(await make({ table: 'u', n: 1 }, ctx), 'u:1');
  });

  it('answers a missing param with MISSING_PARAMETER and a wrong type with INVALID_PARAMETER', async () => {
    const commands = bus();
    let ran = false;
    commands.register({
      name: 'thing.make',
      params: { type: 'object', required: ['table'], properties: { table: { type: 'string' }, rows: { type: 'array', items: { type: 'integer' } } } },
      handler: () => { ran = true; },
    });
    await assert.rejects(commands.execute('thing.make', {}, ctx), (e: EngineError) => e.id === 'MISSING_PARAMETER' && /"table"/.test(e.message));
    await assert.rejects(commands.execute('thing.make', { table: 5 }, ctx), (e: EngineError) => e.id === 'INVALID_PARAMETER' && /table/.test(e.message));
    await assert.rejects(commands.execute('thing.make', { table: 't', rows: [1, 'x'] }, ctx), (e: EngineError) => e.id === 'INVALID_PARAMETER' && /rows\[1\]/.test(e.message));
    assert.equal(ran, false);
  });

  it('does not run the handler when authorization fails', async () => {
    const commands = bus();
    let ran = false;
    commands.register({ name: 'thing.forbidden', params: { type: 'object' }, handler: () => { ran = true; } });
    await assert.rejects(commands.execute('thing.forbidden', {}, ctx), (e: EngineError) => e.id === 'NOT_AUTHORIZED');
    assert.equal(ran, false);
  });

  it('skips role checks for commands open to any authenticated principal', async () => {
    const decisions: string[] = [];
    const commands = bus(decisions);
    commands.register({ name: 'session.ping', access: 'authenticated', params: { type: 'object' }, handler: () => 'pong' });
    assert.equal(await commands.execute('session.ping', {}, ctx), 'pong');
    assert.deepEqual(decisions, []);
  });

  it('refuses a duplicate name, a malformed name and an unknown command', async () => {
    const commands = bus();
    commands.register({ name: 'thing.make', params: { type: 'object' }, handler: () => 1 });
    assert.throws(() => commands.register({ name: 'thing.make', params: { type: 'object' }, handler: () => 2 }), /registered twice/);
    assert.throws(() => commands.register({ name: 'make', params: { type: 'object' }, handler: () => 2 }), /noun\.verb/);
    assert.throws(() => commands.resolve('thing.none'), (e: EngineError) => e.id === 'UNKNOWN_COMMAND');
    await assert.rejects(commands.execute('thing.none', {}, ctx), (e: EngineError) => e.id === 'UNKNOWN_COMMAND');
    assert.deepEqual(commands.list().map((c) => c.name), ['thing.make']);
  });

  it('turns a handler exception into a rejected promise', async () => {
    const commands = bus();
    commands.register({ name: 'thing.fail', params: { type: 'object' }, handler: () => { throw new EngineError('RECORD_NOT_FOUND', { id: 1, table: 't' }); } });
    await assert.rejects(commands.execute('thing.fail', {}, ctx), (e: EngineError) => e.code === 101);
  });
});

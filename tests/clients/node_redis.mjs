// node-redis's own Bloom and cuckoo filter APIs (`client.bf`, `client.cf`), unchanged, against a
// server with this module.
//
// usage: node node_redis.mjs PORT PROTOCOL   (PROTOCOL 2 or 3), with NODE_PATH naming the
// node_modules that holds `redis`; exits non-zero on the first answer that is not what
// node-redis's users get from RedisBloom.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { createClient, RESP_TYPES } = require('redis');
const { version } = require('redis/package.json');

const [port, protocol] = process.argv.slice(2).map(Number);
const client = createClient({ socket: { host: '127.0.0.1', port }, RESP: protocol });
client.on('error', (error) => { throw error; });
await client.connect();
await client.flushAll();

assert.equal(await client.bf.reserve('users', 0.01, 1000), 'OK');
assert.equal(await client.bf.add('users', 'alice'), true);
assert.equal(await client.bf.add('users', 'alice'), false);
assert.deepEqual(await client.bf.mAdd('users', ['bob', 'carol', 'alice']), [true, true, false]);
assert.equal(await client.bf.exists('users', 'bob'), true);
assert.equal(await client.bf.exists('users', 'mallory'), false);
assert.deepEqual(await client.bf.mExists('users', ['alice', 'mallory']), [true, false]);
assert.equal(await client.bf.card('users'), 3);

// BF.INFO: node-redis turns RESP2's flat list into an object; RESP3's map arrives as one.
const info = await client.bf.info('users');
assert.equal(info['Capacity'], 1000);
assert.equal(info['Number of items inserted'], 3);
assert.equal(info['Number of filters'], 1);
assert.equal(info['Expansion rate'], 2);
assert.ok(info['Size'] > 0, JSON.stringify(info));

assert.deepEqual(
  await client.bf.insert('fresh', ['x', 'y'], { CAPACITY: 10, ERROR: 0.001, EXPANSION: 3 }),
  [true, true],
);
assert.equal((await client.bf.info('fresh'))['Expansion rate'], 3);
await assert.rejects(client.bf.insert('missing', ['x'], { NOCREATE: true }), /not found/);
assert.equal(await client.exists('missing'), 0);

// A full non-scaling filter: MADD and INSERT answer the error as an element of the reply.
// node-redis hands it over as an error object under RESP3, and turns it into `false` under
// RESP2 (its boolean transform), as it does with RedisBloom.
const isFullError = (answer) => protocol === 3
  ? answer instanceof Error && /^ERR non scaling filter is full$/.test(answer.message)
  : answer === false;
await client.bf.reserve('small', 0.01, 2, { NONSCALING: true });
const madd = await client.bf.mAdd('small', ['a', 'b', 'c', 'd']);
assert.ok(madd.length >= 3 && isFullError(madd.at(-1)), String(madd));
const insert = await client.bf.insert('small', ['e', 'f'], { NONSCALING: true });
assert.ok(isFullError(insert.at(-1)), String(insert));
assert.equal(await client.bf.card('small'), madd.length - 1);

// The SCANDUMP/LOADCHUNK loop, as node-redis's documentation shows it; chunks are binary, so
// they travel as Buffers.
const binary = client.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
const chunks = [];
for (let iterator = 0; ;) {
  const { iterator: next, chunk } = await binary.bf.scanDump('users', iterator);
  if (next === 0) break;
  assert.ok(Buffer.isBuffer(chunk));
  chunks.push([next, chunk]);
  iterator = next;
}
assert.ok(chunks.length >= 2, `${chunks.length} chunks`);
for (const [iterator, chunk] of chunks) {
  assert.equal(await binary.bf.loadChunk('copy', iterator, chunk), 'OK');
}
assert.deepEqual(await client.bf.mExists('copy', ['alice', 'bob', 'carol']), [true, true, true]);
assert.equal(await client.bf.card('copy'), 3);

// node-redis's `client.cf`: cuckoo filters, deletes and the dump loop.
assert.equal(await client.cf.reserve('tokens', 1000, { BUCKETSIZE: 4, MAXITERATIONS: 30, EXPANSION: 2 }), 'OK');
assert.equal(await client.cf.add('tokens', 't1'), true);
assert.equal(await client.cf.addNX('tokens', 't1'), false);
assert.deepEqual(await client.cf.insert('tokens', ['t2', 't3']), [true, true]);
assert.deepEqual((await client.cf.insertNX('tokens', ['t3', 't4'])).map(Number), [0, 1]);
assert.equal(await client.cf.exists('tokens', 't2'), true);
assert.deepEqual(await client.cf.mExists('tokens', ['t1', 'never']), [true, false]);
assert.equal(await client.cf.count('tokens', 't1'), 1);
assert.equal(await client.cf.del('tokens', 't1'), true);
assert.equal(await client.cf.del('tokens', 't1'), false);
const cfInfo = await client.cf.info('tokens');
assert.equal(cfInfo['Bucket size'], 4);
assert.equal(cfInfo['Max iterations'], 30);
assert.equal(cfInfo['Expansion rate'], 2);
assert.equal(cfInfo['Number of items inserted'], 3);
assert.equal(cfInfo['Number of items deleted'], 1);
await assert.rejects(client.cf.insert('absent', ['x'], { NOCREATE: true }), /not found/);
const cfChunks = [];
for (let iterator = 0; ;) {
  const { iterator: next, chunk } = await binary.cf.scanDump('tokens', iterator);
  if (next === 0) break;
  cfChunks.push([next, chunk]);
  iterator = next;
}
for (const [iterator, chunk] of cfChunks) {
  assert.equal(await binary.cf.loadChunk('tokens-copy', iterator, chunk), 'OK');
}
assert.deepEqual(await client.cf.mExists('tokens-copy', ['t2', 't3', 't4']), [true, true, true]);

await client.quit();
console.log(`node-redis ${version}, RESP${protocol}: ok`);

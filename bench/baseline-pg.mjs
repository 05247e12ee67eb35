// The PostgreSQL profile's baseline: `node bench/baseline-pg.mjs DATABASE_URL REDIS_URL PORT [POOL]` serves
// `POST /api/v1/file-data` from a database filedata imported, counting each request in Redis, as a careful
// engineer would write it for speed on node:http, pg and ioredis with no framework. Not shipped; only measured
// against (docs/performance.md#postgresql-and-redis).
//
// Per request: the body checked as the contract asks (bench/lib/baseline-handler.mjs), one round trip to Redis
// (one Lua script counting the client address and the key's hash, each in its fixed window, refusing with 429
// past a quota) and one to PostgreSQL (one named prepared statement answering access and, when the key owns the
// file, returning the metadata and the submissions array joined inside PostgreSQL by `string_agg` over the
// entries rendered at import), then one `end`. Pool of POOL connections (10, filedata's default).

import { hash } from "node:crypto"
import { createServer } from "node:http"
import { createRequire } from "node:module"
import { join } from "node:path"
import { bodies, listener, problem, reply, replyHead } from "./lib/baseline-handler.mjs"
import { root } from "./lib/processes.mjs"

const [databaseUrl, redisUrl, port = "0", poolSize = "10"] = process.argv.slice(2)
// pg and ioredis as the adapters reach them (the root does not depend on either).
const fromPostgres = createRequire(join(root, "packages/postgres/package.json"))
const pg = createRequire(fromPostgres.resolve("@effect/sql-pg/package.json"))("pg")
const { Redis } = createRequire(join(root, "packages/rate-limiter-redis/package.json"))("ioredis")

const windowMillis = 60_000
const limit = Number(process.env.RATE_LIMIT_MAX ?? 1_000_000_000)
const addressLimit = Number(process.env.RATE_LIMIT_IP_MAX ?? 1_000_000_000)

const pool = new pg.Pool({ connectionString: databaseUrl, max: Number(poolSize) })
// Both scopes in one script: the address first, and the key only when the address is within its quota.
const redis = new Redis(redisUrl, {
  scripts: {
    consumeBoth: {
      numberOfKeys: 2,
      lua: `local function consume(key)
  local count = redis.call("INCR", key)
  if count == 1 then redis.call("PEXPIRE", key, ARGV[1]) end
  return count
end
local address = consume(KEYS[1])
if address > tonumber(ARGV[2]) then return {1, address} end
return {2, consume(KEYS[2])}`
    }
  }
})

// Access, metadata and the array in one statement: no row is an unknown or revoked key, null file columns a
// file that does not exist; the array only when the key's user owns the file, ordered by the index
// (file_id, created_date, seq) the subquery walks.
const answer = {
  name: "file-data",
  text: `SELECT k.user_id, f.user_id, f.name, (extract(epoch from f.creation_date) * 1000)::int8,
      f.public_availability, f.submission_counter, f.visit_counter,
      CASE WHEN f.user_id = k.user_id THEN
        (SELECT convert_to(string_agg(entry, ','), 'UTF8')
         FROM (SELECT entry FROM submissions WHERE file_id = $1 ORDER BY created_date, seq) s) END
    FROM api_keys k LEFT JOIN files f ON f.id = $1
    WHERE k.key_hash = $2 AND k.revoked_at IS NULL`,
  rowMode: "array"
}

const tooMany = Buffer.from(
  JSON.stringify({
    type: "urn:filedata:problem:rate_limited",
    title: "Too Many Requests",
    status: 429,
    detail: "Too many requests.",
    code: "rate_limited"
  })
)

const server = createServer(
  listener(async (res, fileId, apiKey) => {
    const keyHash = hash("sha256", apiKey, "hex")
    const [scope, count] = await redis.consumeBoth(
      `baseline:clientAddress:${res.req.socket.remoteAddress}`,
      `baseline:apiKey:${keyHash}`,
      windowMillis,
      addressLimit
    )
    if (count > (scope === 1 ? addressLimit : limit)) return problem(res, 429, tooMany)
    const { rows } = await pool.query({ ...answer, values: [fileId, keyHash] })
    const row = rows[0]
    if (row === undefined) return problem(res, 403, bodies[403])
    const [userId, ownerId, name, creationDate, publicAvailability, submissionCounter, visitCounter, entries] = row
    if (ownerId === null) return problem(res, 404, bodies[404])
    if (ownerId !== userId) return problem(res, 403, bodies[403])
    reply(res, replyHead(name, Number(creationDate), publicAvailability, submissionCounter, visitCounter), entries)
  })
)
server.listen(Number(port), "127.0.0.1", () => console.log(`listening on http://127.0.0.1:${server.address().port}`))
process.on("SIGTERM", () => {
  server.close()
  Promise.allSettled([pool.end(), redis.quit()]).then(() => process.exit(0))
})

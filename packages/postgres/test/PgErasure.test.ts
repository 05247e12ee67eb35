import { describe, expect, it } from "@effect/vitest"
import { Erasure, FileData, FileRepository, OperatorStore, type SubmissionId } from "@filedata/core"
import { PgStorage } from "@filedata/postgres"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { admin, importDocument, tempSchema, testDatabaseUrl, urlForSchema } from "./utils.js"

const fileId = (id: string): FileData.FileId => FileData.FileId.make(id)

const rows = (count: number, email: (i: number) => string) =>
  Array.from({ length: count }, (_, i) => ({
    createdDate: new Date(Date.UTC(2024, 0, 1) - i * 1000).toISOString(),
    content: { email: email(i) }
  }))

describe.skipIf(testDatabaseUrl === undefined)("PgStorage eraseSubmissions", () => {
  it.scoped("erases by id in reply order at feed positions after every submission, and refuses others' ids", () =>
    Effect.gen(function* () {
      const schema = yield* tempSchema
      const at = (name: string) => `${schema}.${name}`
      yield* Effect.gen(function* () {
        yield* importDocument({
          users: [{ id: "u1", apiKeys: ["k1"] }],
          files: [
            {
              id: "f1",
              userId: "u1",
              name: "F1",
              creationDate: "2024-01-01T00:00:00Z",
              submissions: rows(4, (i) => `p${i}@x`)
            },
            {
              id: "f2",
              userId: "u1",
              name: "F2",
              creationDate: "2024-01-01T00:00:00Z",
              submissions: rows(1, () => "q@x")
            }
          ]
        })
        const stored = yield* admin(
          (sql) =>
            sql<{ id: string; file_id: string; seq: string }>`SELECT id, file_id, seq::text AS seq
            FROM ${sql.literal(at("submissions"))} ORDER BY created_date, seq`
        )
        const ofF1 = stored.filter((row) => row.file_id === "f1").map((row) => row.id as SubmissionId.SubmissionId)
        const ofF2 = stored.filter((row) => row.file_id === "f2").map((row) => row.id as SubmissionId.SubmissionId)
        const f1 = (i: number) => ofF1[i] as SubmissionId.SubmissionId
        const other = ofF2[0] as SubmissionId.SubmissionId
        const store = yield* OperatorStore.OperatorStore
        const refused = yield* Effect.flip(store.eraseSubmissions(fileId("f1"), { _tag: "Ids", ids: [f1(0), other] }))
        expect(refused).toEqual(new Erasure.SubmissionsNotInFile({ fileId: "f1", unknown: [], elsewhere: [other] }))

        // Named in another order than reply order; the summary lists them in reply order.
        const summary = yield* store.eraseSubmissions(fileId("f1"), { _tag: "Ids", ids: [f1(3), f1(1)] })
        expect(summary).toEqual({ fileId: "f1", ids: [ofF1[1], ofF1[3]], submissionCounter: 2, visitCounter: 0 })
        const erasures = yield* admin(
          (sql) =>
            sql<{ seq: string; submission_id: string }>`SELECT seq::text AS seq, submission_id
            FROM ${sql.literal(at("submission_erasures"))} ORDER BY seq`
        )
        expect(erasures.map((row) => row.submission_id)).toEqual([ofF1[1], ofF1[3]])
        const top = Math.max(...stored.map((row) => Number(row.seq)))
        expect(erasures.map((row) => Number(row.seq))).toEqual([top + 1, top + 2])
        const [point] = yield* admin(
          (sql) => sql<{ seq: string }>`SELECT seq::text AS seq FROM ${sql.literal(at("submission_read_point"))}`
        )
        expect(Number(point?.seq)).toBe(top + 2)
        const left = yield* admin(
          (sql) =>
            sql<{
              id: string
            }>`SELECT id FROM ${sql.literal(at("submissions"))} WHERE file_id = 'f1' ORDER BY created_date, seq`
        )
        expect(left.map((row) => row.id)).toEqual([ofF1[0], ofF1[2]])
      }).pipe(Effect.provide(PgStorage.layer({ url: urlForSchema(schema), poolMax: 2 })))
    })
  )
  it.live("runs without the requests' statement timeout, which still bounds the reads of the same pool", () =>
    Effect.gen(function* () {
      const schema = yield* tempSchema
      yield* Effect.gen(function* () {
        yield* importDocument({
          users: [{ id: "u1", apiKeys: ["k1"] }],
          files: [
            {
              id: "f1",
              userId: "u1",
              name: "F1",
              creationDate: "2024-01-01T00:00:00Z",
              submissions: rows(3, (i) => (i === 1 ? "gone@x" : `p${i}@x`))
            }
          ]
        })
        // Another session holds the files table for longer than the timeout, so that every statement reading it
        // waits: the erasure's first read of the file after its lock, and a read's.
        const locked = yield* Deferred.make<void>()
        yield* admin((sql) =>
          sql.withTransaction(
            sql`LOCK TABLE ${sql(schema)}.files IN ACCESS EXCLUSIVE MODE`.pipe(
              Effect.zipRight(Deferred.succeed(locked, undefined)),
              Effect.zipRight(Effect.sleep("700 millis"))
            )
          )
        ).pipe(Effect.forkScoped)
        yield* Deferred.await(locked)
        const store = yield* OperatorStore.OperatorStore
        const files = yield* FileRepository.FileRepository
        const [erased, read] = yield* Effect.all(
          [
            store.eraseSubmissions(fileId("f1"), { _tag: "Where", matches: [{ name: "email", value: "gone@x" }] }),
            Effect.exit(files.findFile(fileId("f1")))
          ],
          { concurrency: "unbounded" }
        )
        expect(erased.ids).toHaveLength(1)
        expect(erased.submissionCounter).toBe(2)
        expect(Exit.isFailure(read)).toBe(true)
      }).pipe(Effect.provide(PgStorage.layer({ url: urlForSchema(schema), poolMax: 2, statementTimeoutMillis: 200 })))
    }).pipe(Effect.scoped)
  )
})

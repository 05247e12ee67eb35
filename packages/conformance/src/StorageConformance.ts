/**
 * The behaviour every storage adapter owes the core, as suites of tests that run unchanged against each adapter
 * of the `FileRepository` and `OperatorStore` ports. The suite is cut into {@link sections}, one module each in
 * `internal/storage/`, so an adapter author can run one of them while working on it.
 *
 * @since 0.1.0
 */
import { describe } from "@effect/vitest"
import { type FileDataError, FileRepository, type OperatorStore, type SubmissionSignals } from "@filedata/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { accounts } from "./internal/storage/accounts.js"
import { appends } from "./internal/storage/appends.js"
import { changes } from "./internal/storage/changes.js"
import { concurrentFeed } from "./internal/storage/concurrentFeed.js"
import { contentNames } from "./internal/storage/contentNames.js"
import { erasures } from "./internal/storage/erasures.js"
import { exportPages } from "./internal/storage/exportPages.js"
import { files } from "./internal/storage/files.js"
import type { WithStorage } from "./internal/storage/fixtures.js"
import { ids } from "./internal/storage/ids.js"
import { imports } from "./internal/storage/imports.js"
import { ranges } from "./internal/storage/ranges.js"
import { readPoints } from "./internal/storage/readPoints.js"
import { signals } from "./internal/storage/signals.js"
import { textRules } from "./internal/storage/textRules.js"

/**
 * Builds the adapter under test. Every call must give an empty store of its own, released with the layer.
 *
 * @since 0.1.0
 * @category models
 */
export type MakeStorage = (options: {
  readonly pageSize: number
}) => Layer.Layer<FileRepository.FileRepository | OperatorStore.OperatorStore, FileDataError.StorageUnavailable>

const registered = {
  files,
  textRules,
  ranges,
  readPoints,
  contentNames,
  exportPages,
  imports,
  appends,
  ids,
  changes,
  accounts,
  erasures
} satisfies Record<string, (withStorage: WithStorage) => void>

/**
 * The suite's sections, in the order {@link suite} runs them: `files` (keys, finds, content and instants as
 * imported), `textRules` (longest ids, any character, refusals by path), `ranges` (pages, windows, positions,
 * joined pages, incremental reads), `readPoints`, `contentNames`, `exportPages` (CSV and NDJSON pages as the core
 * renders them), `imports` (all or nothing; keys), `appends`, `ids` (submission ids on pages, joined pages and
 * export lines), `changes` (the change feed: commit order, paging, read points), `accounts` (key prefixes,
 * users) and `erasures` (by ids and by content, refusals, nothing left to read).
 *
 * @since 0.2.0
 * @category models
 */
export const sections = Object.keys(registered) as ReadonlyArray<Section>

/**
 * The name of one of {@link sections}.
 *
 * @since 0.2.0
 * @category models
 */
export type Section = keyof typeof registered

/**
 * Registers the suite under `name`, every section unless `only` names some (`["ranges"]` while working on
 * paging). Tests that look at page boundaries ask for small pages.
 *
 * @since 0.1.0
 * @category suites
 */
export const suite = (name: string, makeStorage: MakeStorage, only: ReadonlyArray<Section> = sections): void => {
  const withStorage: WithStorage =
    (pageSize = 1000) =>
    (self) =>
      Effect.provide(self, makeStorage({ pageSize }))

  // Each test builds and migrates a store of its own and imports through it: on a busy machine that outlasts
  // vitest's default 5 s, so an adapter author's run does not depend on the machine's load.
  describe(name, { timeout: 60_000 }, () => {
    for (const section of sections) if (only.includes(section)) registered[section](withStorage)
  })
}

/**
 * The adapter `makeStorage` builds with its optional capabilities taken away (`encodedPages`): run the suite on
 * it to show that an adapter written without them passes every case, on the defaults the core writes from
 * `readSubmissions`.
 *
 * @since 0.2.0
 * @category combinators
 */
export const withoutCapabilities =
  (makeStorage: MakeStorage): MakeStorage =>
  (options) =>
    Layer.scopedContext(
      Effect.map(Layer.build(makeStorage(options)), (context) => {
        const { encodedPages: _, ...domainOnly } = Context.get(context, FileRepository.FileRepository)
        return Context.add(context, FileRepository.FileRepository, domainOnly)
      })
    )

/**
 * Builds an adapter that also provides `SubmissionSignals`; as {@link MakeStorage}, an empty store each call.
 *
 * @since 0.2.0
 * @category models
 */
export type MakeSignalledStorage = (options: {
  readonly pageSize: number
}) => Layer.Layer<
  FileRepository.FileRepository | OperatorStore.OperatorStore | SubmissionSignals.SubmissionSignals,
  FileDataError.StorageUnavailable
>

/**
 * Registers the `SubmissionSignals` cases under `name`: a wait on a file's read point ends with `true` after an
 * append to it through the operator port, with `false` when its time is up or its signal aborts.
 *
 * @since 0.2.0
 * @category suites
 */
export const signalsSuite = (name: string, makeStorage: MakeSignalledStorage): void => {
  describe(name, { timeout: 60_000 }, () => signals(makeStorage))
}

/**
 * Builds `count` instances of the adapter on one empty store, as several processes or servers share one
 * database: each with connections of its own, all released with the scope.
 *
 * @since 0.3.0
 * @category models
 */
export type MakeInstances = (
  count: number
) => Effect.Effect<
  ReadonlyArray<Context.Context<FileRepository.FileRepository | OperatorStore.OperatorStore>>,
  FileDataError.StorageUnavailable,
  Scope.Scope
>

/**
 * Registers under `name` the change feed read while writers on several instances append to one file and erase
 * from it, by ids and by content (docs/architecture.md#the-change-feed): every reader, on every instance, sees
 * every change of the final feed exactly once and in its order, which keeps each writer's own; the only other
 * changes it sees are `created` changes of submissions erased later, at their place and before their `erased`.
 *
 * @since 0.3.0
 * @category suites
 */
export const concurrentFeedSuite = (name: string, makeInstances: MakeInstances): void => {
  describe(name, { timeout: 120_000 }, () => concurrentFeed(makeInstances))
}

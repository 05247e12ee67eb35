/**
 * The wait of a request that may wait (`wait` seconds) for its file to change, shared by the incremental read
 * and the change feed: read the first page; while it is empty and time is left, wait for the file to change (or
 * the wait to end), then open the file again through the same rules and read again.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { about, type GetSubmissionsError, type StorageUnavailable } from "../../shared/FileDataError.js"
import type * as FileRepository from "../../shared/FileRepository.js"
import * as FileRequest from "../../shared/FileRequest.js"
import * as Immediate from "../../shared/Immediate.js"
import * as SubmissionSignals from "../SubmissionSignals.js"
import type * as WaitingRequests from "../WaitingRequests.js"

/**
 * What a wait runs on: the repository it reads again, the signals it wakes on, the process's waiting requests.
 *
 * @internal
 */
export interface Ports {
  readonly files: FileRepository.FileRepository
  readonly signals: SubmissionSignals.SubmissionSignals
  readonly waiting?: WaitingRequests.WaitingRequests | undefined
}

/**
 * How a waiting request reads its file: its first page as the file stands, whether that page is empty, and the
 * reply that starts with it.
 *
 * @internal
 */
export interface Reader<Page, Reply> {
  readonly first: (file: FileRepository.FoundFile) => Effect.Effect<Page, StorageUnavailable>
  readonly isEmpty: (page: Page) => boolean
  readonly reply: (file: FileRepository.FoundFile, first: Page) => Reply
}

/**
 * The reply of a request with `wait` seconds, once its first page holds something, its wait ends (the empty
 * reply), the transport says its client went away (`gone`), or the process stops (`WaitingRequests`). Written as
 * plain steps, not a scope and a generator: ten thousand requests may wait at once, and what each holds is what
 * its fiber keeps (docs/performance.md#long-poll).
 *
 * @internal
 */
export const waited = <Page, Reply>(
  ports: Ports,
  input: {
    readonly clientAddress: string
    readonly gone?: ((listener: () => void) => () => void) | undefined
  },
  request: FileRequest.Credentials & { readonly wait: number },
  found: FileRepository.FoundFile,
  reader: Reader<Page, Reply>
): Effect.Effect<Reply, GetSubmissionsError> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => {
    const { files, signals, waiting } = ports
    const deadline = now + request.wait * 1000
    // Ended when the wait must end at once: the process stops, or the client went away. Made at the first
    // wait, with the hold on the bounds and the client's listener, both given back when the request ends.
    let end: SubmissionSignals.WaitEnd | undefined
    let release: (() => void) | undefined
    const look = (file: FileRepository.FoundFile): Effect.Effect<Reply, GetSubmissionsError> =>
      Immediate.flatMap(reader.first(file), (first) =>
        Effect.flatMap(Clock.currentTimeMillis, (now): Effect.Effect<Reply, GetSubmissionsError> => {
          const reply = reader.reply(file, first)
          const left = deadline - now
          if (!reader.isEmpty(first) || left <= 0) return Immediate.succeed(reply)
          const waitFor = (ending: SubmissionSignals.WaitEnd) =>
            Effect.flatMap(
              // One registration, no fiber or timer of its own: a waiting request costs little more than its socket.
              signals.changed(file.id, file.readPoint, { timeoutMillis: left, end: ending }),
              (changed) =>
                changed ? Effect.flatMap(FileRequest.reopen(files, request), look) : Immediate.succeed(reply)
            )
          if (end !== undefined) return waitFor(end)
          const ending = new SubmissionSignals.WaitEnd()
          end = ending
          return Immediate.flatMap(
            waiting === undefined
              ? Immediate.succeed(undefined)
              : waiting.hold(request.apiKey, input.clientAddress, ending),
            (given) => {
              const forget = input.gone?.(() => ending.end())
              release = () => {
                given?.()
                forget?.()
              }
              return waitFor(ending)
            }
          )
        })
      )
    // A refusal after the first check names what that check found (`FileDataError.about`).
    const asked = { fileId: found.id, userId: found.ownerId }
    return Effect.ensuring(
      Effect.mapError(look(found), (failure) => about(failure, asked)),
      Effect.sync(() => release?.())
    )
  })

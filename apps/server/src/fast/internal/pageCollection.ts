/**
 * Collects the young generation after every few MiB of pages a reply hands to a socket, once turned on at start
 * (`HTTP_COLLECT_SENT_PAGES`, on by default). A page comes from storage as a `Buffer` whose bytes live outside
 * V8's heap, and V8 collects for such memory only past a soft limit of 64 MiB while a big reply allocates almost
 * nothing on the heap: the pages already sent then pile up (docs/performance.md#where-a-big-replys-memory-goes).
 * A young collection takes a millisecond or two.
 *
 * @internal
 */
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"

/**
 * The bytes of pages written between two collections.
 *
 * @internal
 */
export const intervalBytes = 4 * 1024 * 1024

type CollectYoung = (options: { readonly type: "minor"; readonly execution: "sync" }) => void

let collectYoung: CollectYoung | undefined
let written = 0

/**
 * Turns the collections on for the process; the server calls it once at start when its setting says so. `gc` is
 * exposed in a context of its own (the service's code and an embedder's see no global `gc`) and the flag is put
 * back at once: V8 refuses a code cache made under other flags (docs/performance.md#code-cache).
 *
 * @internal
 */
export const enable = (): void => {
  if (collectYoung !== undefined) return
  setFlagsFromString("--expose-gc")
  try {
    collectYoung = runInNewContext("gc") as CollectYoung
  } finally {
    setFlagsFromString("--no-expose-gc")
  }
}

/**
 * Counts a piece written to a socket or a compressor; once turned on ({@link enable}), past `intervalBytes` of
 * `Buffer`s since the last collection, collects the young generation and says so. Strings live on V8's heap,
 * which collects them itself.
 *
 * @internal
 */
export const count = (piece: string | Uint8Array): boolean => {
  if (collectYoung === undefined || typeof piece === "string") return false
  written += piece.byteLength
  if (written < intervalBytes) return false
  written = 0
  collectYoung({ type: "minor", execution: "sync" })
  return true
}

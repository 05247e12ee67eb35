/**
 * Texts joined for a page the SQL adapters hand out already encoded (`EncodedPages`): as text while short, as
 * UTF-8 bytes once the text would reach the size at which V8 makes a string a large object, so a long page is
 * never one such string (docs/performance.md#pieces-below-the-large-object-size). The core joins plain text;
 * this is the adapters' concern, where the pages are made.
 *
 * @since 0.2.0
 */

import { EncodedPages, ExportEncoder, type FileRepository, SubmissionEntry, type SubmissionId } from "@filedata/core"
import * as Arr from "effect/Array"

/**
 * About how long, in UTF-16 code units, a joined text may grow before it is joined as bytes instead.
 *
 * @since 0.2.0
 * @category constants
 */
export const maxTextLength = 64 * 1024

const encoder = new TextEncoder()

/**
 * Texts joined by `separator`, `end` after the last when there is one (both ASCII): as text below
 * {@link maxTextLength}, else as UTF-8 bytes.
 *
 * @since 0.2.0
 * @category encoding
 */
export const join = (texts: ReadonlyArray<string>, separator: string, end = ""): string | Uint8Array => {
  if (texts.length === 0) return ""
  let length = separator.length * (texts.length - 1) + end.length
  for (let i = 0; i < texts.length; i++) length += (texts[i] as string).length
  if (length < maxTextLength) return texts.join(separator) + end
  const between = encoder.encode(separator)
  // One byte a code unit, as most texts are; grown when they are not.
  let out = new Uint8Array(length + 1024)
  let at = 0
  const room = (bytes: number) => {
    if (out.length - at >= bytes) return
    const grown = new Uint8Array(Math.max(2 * out.length, at + bytes))
    grown.set(out.subarray(0, at))
    out = grown
  }
  for (let i = 0; i < texts.length; i++) {
    if (i > 0 && between.length > 0) {
      room(between.length)
      out.set(between, at)
      at += between.length
    }
    const text = texts[i] as string
    // UTF-8 takes at most three bytes per UTF-16 code unit.
    room(3 * text.length)
    at += encoder.encodeInto(text, out.subarray(at)).written
  }
  room(end.length)
  at += encoder.encodeInto(end, out.subarray(at)).written
  return out.subarray(0, at)
}

const joined = (page: FileRepository.SubmissionPage, text: string | Uint8Array): EncodedPages.JoinedPage =>
  page.hasMore
    ? { joined: text, count: page.entries.length, next: page.next, hasMore: true }
    : { joined: text, count: page.entries.length, next: page.next, hasMore: false }

// Each entry of a page with its id first (`SubmissionEntry.withId`); `ids` is parallel to `entries`.
const withIds = (page: FileRepository.SubmissionPage): Array<string> =>
  page.entries.map((entry, i) => SubmissionEntry.withId(page.ids[i] as SubmissionId.SubmissionId, entry))

/**
 * A domain page as `EncodedPages.join` gives it in `form`, joined by {@link join}.
 *
 * @since 0.2.0
 * @category encoding
 */
export const page = (
  page: FileRepository.SubmissionPage,
  form: EncodedPages.EntryForm = "stored"
): EncodedPages.JoinedPage => joined(page, join(form === "stored" ? page.entries : withIds(page), ","))

/**
 * A domain page as an export writes it, joined by {@link join}: each NDJSON line the entry with its id first
 * and `\n`, each CSV row as `ExportEncoder.csvRows` renders it.
 *
 * @since 0.2.0
 * @category encoding
 */
export const exportPage = (
  rows: EncodedPages.ExportRows,
  page: FileRepository.SubmissionPage
): EncodedPages.JoinedPage => joined(page, join(Arr.zipWith(page.entries, page.ids, ExportEncoder.lineOf(rows)), ""))

/**
 * A domain page of the change feed as `EncodedPages.joinChanges` gives it, joined by {@link join}.
 *
 * @since 0.3.0
 * @category encoding
 */
export const changes = (page: FileRepository.ChangePage): EncodedPages.JoinedChanges => ({
  joined: join(page.changes.map(EncodedPages.changeText), ","),
  count: page.changes.length,
  next: page.next,
  hasMore: page.hasMore
})

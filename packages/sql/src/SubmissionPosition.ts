/**
 * The positions both SQL adapters hand out from `FileRepository.readSubmissions`: a submission's place in reply
 * order, its `created_date` (epoch milliseconds) and its `seq`, as the text `createdDate:seq`. Every
 * submission's `seq` is at least 1, so the position `(t, 0)` lies just before the first submission at `t`.
 *
 * @since 0.1.0
 */
import { FileData } from "@filedata/core"
import * as Order from "effect/Order"

/**
 * A place in reply order. `seq` stays text: PostgreSQL's int8 can exceed what a double holds exactly.
 *
 * @since 0.1.0
 * @category models
 */
export interface Position {
  readonly createdDate: number
  readonly seq: string
}

const INT8_MAX = "9223372036854775807"
// Canonical numerals only, so each position has one text.
const SEQ = /^(0|[1-9]\d{0,18})$/
const TEXT = /^(0|-?[1-9]\d{0,14}):(.*)$/

/**
 * The `seq` `text` names, if an adapter could have written it: a canonical numeral within int8 (each seq has one
 * text); anything else names none.
 *
 * @since 0.3.0
 * @category decoding
 */
export const parseSeq = (text: string): string | undefined =>
  SEQ.test(text) && (text.length < INT8_MAX.length || text <= INT8_MAX) ? text : undefined

/**
 * The text of a position.
 *
 * @since 0.1.0
 * @category encoding
 */
export const format = (position: Position): string => `${position.createdDate}:${position.seq}`

/**
 * The position `text` names, if it is one an adapter could have made: a representable instant and a `seq`
 * within int8; anything else names none, and is read as no submission.
 *
 * @since 0.1.0
 * @category decoding
 */
export const parse = (text: string): Position | undefined => {
  const match = TEXT.exec(text)
  if (match === null) return undefined
  const createdDate = Number(match[1])
  const seq = parseSeq(match[2] as string)
  return FileData.isRepresentable(createdDate) && seq !== undefined ? { createdDate, seq } : undefined
}

// Before every submission: the earliest representable instant, below every seq.
const start: Position = { createdDate: Date.parse("0000-01-01T00:00:00.000Z"), seq: "0" }

/**
 * Where a window that begins at `since` (epoch milliseconds, `undefined`: no beginning) starts: just before its
 * first submission.
 *
 * @since 0.1.0
 * @category constructors
 */
export const windowStart = (since: number | undefined): Position =>
  since === undefined ? start : { createdDate: since, seq: "0" }

// Seqs are canonical numerals as text (an int8 may pass a double's exact range): longer is larger.
const seqOrder: Order.Order<string> = Order.combine(
  Order.mapInput(Order.number, (seq: string) => seq.length),
  Order.string
)
const seqAbove = Order.greaterThan(seqOrder)

/**
 * Reply order: ascending `createdDate`, ties by `seq`.
 *
 * @since 0.3.0
 * @category ordering
 */
export const replyOrder: Order.Order<Position> = Order.combine(
  Order.mapInput(Order.number, (position: Position) => position.createdDate),
  Order.mapInput(seqOrder, (position: Position) => position.seq)
)

/**
 * Where a read of the window from `since` that continues after `after` starts: the later of the two.
 *
 * @since 0.1.0
 * @category constructors
 */
export const lowerBound = (after: Position | undefined, since: number | undefined): Position => {
  const window = windowStart(since)
  if (after === undefined) return window
  return after.createdDate > window.createdDate ||
    (after.createdDate === window.createdDate && seqAbove(after.seq, window.seq))
    ? after
    : window
}

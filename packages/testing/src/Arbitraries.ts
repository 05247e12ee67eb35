/**
 * Arbitraries the workspace's property tests share.
 *
 * @since 0.1.0
 */
import * as FastCheck from "effect/FastCheck"

const SURROGATES = 0x800
const FIRST_SURROGATE = 0xd800

const toCodePoint = (index: number): string =>
  String.fromCodePoint(index < FIRST_SURROGATE ? index : index + SURROGATES)

const toIndex = (value: unknown): number => {
  const point = typeof value === "string" ? value.codePointAt(0) : undefined
  if (point === undefined || String.fromCodePoint(point) !== value || (point >= FIRST_SURROGATE && point < 0xe000)) {
    throw new Error("not one code point outside the surrogates")
  }
  return point < FIRST_SURROGATE ? point : point - SURROGATES
}

/**
 * One code point other than a surrogate half, drawn as fast-check's `binary` string unit draws it, without the
 * map of all 1.1 million that fast-check builds to shrink one (0.7 s and 128 MiB, kept for a worker's life).
 *
 * @since 0.1.0
 * @category arbitraries
 */
export const codePoint: FastCheck.Arbitrary<string> = FastCheck.nat({ max: 0x10ffff - SURROGATES }).map(
  toCodePoint,
  toIndex
)

/**
 * `FastCheck.string({ unit: "binary", ...constraints })`: any text of whole code points, from {@link codePoint}.
 *
 * @since 0.1.0
 * @category arbitraries
 */
export const binaryString = (constraints: FastCheck.StringSharedConstraints = {}): FastCheck.Arbitrary<string> =>
  FastCheck.string({ ...constraints, unit: codePoint })

/**
 * The identity of a stored submission: `sub_` and 20 URL-safe characters (120 random bits), assigned by storage
 * when an import or an append writes the submission, unique in the service and never reused. A consumer keys on
 * it to de-duplicate and upsert, and an operator names it to erase the submission.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as Encoding from "effect/Encoding"
import * as Schema from "effect/Schema"

/**
 * A submission id as a request or storage gives it.
 *
 * @since 0.3.0
 * @category schemas
 */
export const SubmissionId = Schema.String.pipe(
  Schema.pattern(/^sub_[A-Za-z0-9_-]{1,64}$/),
  Schema.brand("SubmissionId")
).annotations({
  title: "SubmissionId",
  description: "Identifier of a submission, assigned by the service when it was stored: sub_ and URL-safe characters",
  examples: ["sub_3q2-7wEXAMPLEu5Ry0QZ" as never]
})

/**
 * @since 0.3.0
 * @category models
 */
export type SubmissionId = typeof SubmissionId.Type

/**
 * A new id from 15 random bytes in base64url. `crypto.getRandomValues` is in every runtime the core runs on,
 * so the core needs no port for it.
 *
 * @since 0.3.0
 * @category constructors
 */
export const unsafeRandom = (): SubmissionId =>
  `sub_${Encoding.encodeBase64Url(globalThis.crypto.getRandomValues(new Uint8Array(15)))}` as SubmissionId

/**
 * {@link unsafeRandom} as an effect.
 *
 * @since 0.3.0
 * @category constructors
 */
export const random: Effect.Effect<SubmissionId> = Effect.sync(unsafeRandom)

/**
 * Text storage kept as an id; it was made by {@link unsafeRandom} when the submission was written.
 *
 * @since 0.3.0
 * @category constructors
 */
export const unsafeStored = (text: string): SubmissionId => text as SubmissionId

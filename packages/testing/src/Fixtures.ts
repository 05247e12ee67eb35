/**
 * Fixture documents the tests share, in the import format: the contract's example, the file most server
 * tests serve, a file with only the fields a test cares about, and a file of any size.
 *
 * @since 0.1.0
 */

/**
 * A submission as a fixture lists it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Submission {
  readonly createdDate: string
  readonly content: unknown
}

/**
 * A user as a fixture lists it.
 *
 * @since 0.1.0
 * @category models
 */
export interface User {
  readonly id: string
  readonly apiKeys?: ReadonlyArray<string>
}

/**
 * The example of the contract and the README: one user with one key, one file with every field set.
 *
 * @since 0.1.0
 * @category documents
 */
export const contractExample = {
  users: [{ id: "user-1", apiKeys: ["a-plaintext-api-key"] }],
  files: [
    {
      id: "file-1",
      userId: "user-1",
      name: "Contact form",
      creationDate: "2024-01-01T00:00:00.000Z",
      publicAvailability: true,
      SubmissionCounter: 2,
      VisitCounter: 10,
      submissions: [{ createdDate: "2024-01-02T09:30:00.000Z", content: { email: "a@example.com" } }]
    }
  ]
}

/**
 * User `alice` with `apiKeys`, owner of the file `contact` ("Contact", created 2024-01-01) with
 * `submissions` if given; `otherUsers` are listed after her.
 *
 * @since 0.1.0
 * @category documents
 */
export const aliceContact = (
  apiKeys: ReadonlyArray<string>,
  options: { readonly submissions?: ReadonlyArray<Submission>; readonly otherUsers?: ReadonlyArray<User> } = {}
) => ({
  users: [{ id: "alice", apiKeys }, ...(options.otherUsers ?? [])],
  files: [
    {
      id: "contact",
      userId: "alice",
      name: "Contact",
      creationDate: "2024-01-01T00:00:00.000Z",
      ...(options.submissions === undefined ? {} : { submissions: options.submissions })
    }
  ]
})

/**
 * A file of the fixture format with the fields a test does not care about filled in.
 *
 * @since 0.1.0
 * @category files
 */
export const file = (fields: {
  readonly id: string
  readonly userId: string
  readonly submissions?: ReadonlyArray<Submission>
}) => ({ name: `File ${fields.id}`, creationDate: "2024-01-01T00:00:00.000Z", ...fields })

/**
 * A file `bulk` of user `bulk` with `count` submissions a second apart, each with `words` of filler.
 *
 * @since 0.1.0
 * @category files
 */
export const bulkFile = (count: number, words: number) => ({
  id: "bulk",
  userId: "bulk",
  name: "Bulk",
  creationDate: "2024-01-01T00:00:00.000Z",
  submissions: Array.from({ length: count }, (_, i) => ({
    createdDate: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(),
    content: { n: String(i), text: "lorem ipsum dolor sit amet ".repeat(words) }
  }))
})

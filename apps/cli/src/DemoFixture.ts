/**
 * The data `filedata demo` imports: one user and a few form files, so the API can be tried at once.
 *
 * @since 0.1.0
 */
import { FileData, type Fixture } from "@filedata/core"
import { FixtureDocument } from "@filedata/fixture"
import type * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"

/**
 * The demo user's id.
 *
 * @since 0.1.0
 * @category constants
 */
export const userId: FileData.UserId = FileData.UserId.make("demo-user")

/**
 * The file the printed `curl` command asks for.
 *
 * @since 0.1.0
 * @category constants
 */
export const fileId: FileData.FileId = FileData.FileId.make("demo-contact-form")

/**
 * The file with enough submissions to be read in pages (three of the default 1,000) and to show compression: the
 * docs' sync examples read it.
 *
 * @since 0.2.0
 * @category constants
 */
export const largeFileId: FileData.FileId = FileData.FileId.make("demo-product-survey")

/**
 * How many submissions {@link largeFileId} has.
 *
 * @since 0.2.0
 * @category constants
 */
export const largeFileSubmissions = 2_500

const ratings = ["1", "2", "3", "4", "5"]
const comments = [
  "Does what it says. The export could be faster.",
  "Setup took five minutes; the docs were enough.",
  "I would like a dark mode for the dashboard.",
  "Support answered within the hour. Thank you!",
  "Pricing page is confusing for teams of two."
]

// One answer a minute from 2024-06-01, the same on every run.
const surveyAnswers = Array.from({ length: largeFileSubmissions }, (_, i) => ({
  createdDate: new Date(Date.UTC(2024, 5, 1) + i * 60_000).toISOString(),
  content: {
    respondent: `respondent-${String(i + 1).padStart(4, "0")}`,
    rating: ratings[(i * 7) % ratings.length] ?? "5",
    comment: comments[(i * 3) % comments.length] ?? ""
  }
}))

/**
 * The fixture document, in the contract's format, with `apiKey` as the user's only key.
 *
 * @since 0.1.0
 * @category constructors
 */
export const document = (apiKey: string) => ({
  users: [{ id: userId, apiKeys: [apiKey] }],
  files: [
    {
      id: fileId,
      userId,
      name: "Contact form",
      creationDate: "2024-03-04T08:15:00.000Z",
      publicAvailability: true,
      VisitCounter: 412,
      submissions: [
        {
          createdDate: "2024-03-05T09:12:44.120Z",
          content: {
            name: "Ada Lovelace",
            email: "ada@example.com",
            message: "Could you send me the price list for the analytical engine?"
          }
        },
        {
          createdDate: "2024-03-07T16:40:03.981Z",
          content: {
            name: "Grace Hopper",
            email: "grace@example.org",
            message: "Found a moth in the relay again. Is on-site support included?"
          }
        },
        {
          createdDate: "2024-03-11T11:02:17.500Z",
          content: {
            name: "Alan Turing",
            email: "alan@example.net",
            message: "Is the contact form itself Turing complete? Asking for a friend."
          }
        },
        {
          createdDate: "2024-03-18T07:55:30.004Z",
          content: { name: "Katherine Johnson", email: "katherine@example.com", message: "Please call me back." }
        }
      ]
    },
    {
      id: "demo-event-registration",
      userId,
      name: "Meetup registration",
      creationDate: "2024-04-01T12:00:00.000Z",
      publicAvailability: false,
      SubmissionCounter: 3,
      VisitCounter: 96,
      submissions: [
        {
          createdDate: "2024-04-02T18:21:09.310Z",
          content: { fullName: "Edsger Dijkstra", ticket: "standard", dietary: "none" }
        },
        {
          createdDate: "2024-04-03T08:03:51.777Z",
          content: { fullName: "Barbara Liskov", ticket: "speaker", dietary: "vegetarian" }
        },
        {
          createdDate: "2024-04-03T08:03:51.777Z",
          content: { fullName: "Donald Knuth", ticket: "standard", dietary: "vegan" }
        }
      ]
    },
    {
      id: "demo-feedback-survey",
      userId,
      name: "Feedback survey",
      creationDate: "2024-05-20T14:30:00.000Z"
    },
    {
      id: largeFileId,
      userId,
      name: "Product survey",
      creationDate: "2024-05-31T09:00:00.000Z",
      publicAvailability: true,
      VisitCounter: 9_120,
      submissions: surveyAnswers
    }
  ]
})

/**
 * The demo fixture decoded the way an imported file is, so it gets the same defaults and checks.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (apiKey: FileData.ApiKey): Effect.Effect<Fixture.Fixture, Fixture.FixtureInvalid> =>
  FixtureDocument.decode(document(Redacted.value(apiKey)))

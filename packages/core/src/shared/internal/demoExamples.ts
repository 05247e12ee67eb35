// The submissions `pnpm filedata demo` gives demo-contact-form, as the OpenAPI examples show them: the File
// reply's, and its last two the incremental read's (tests hold both to the demo server's replies).
import type { Timestamp } from "../FileData.js"

/** @internal */
export const contactFormSubmissions = [
  {
    createdDate: "2024-03-05T09:12:44.120Z" as Timestamp,
    content: {
      name: "Ada Lovelace",
      email: "ada@example.com",
      message: "Could you send me the price list for the analytical engine?"
    }
  },
  {
    createdDate: "2024-03-07T16:40:03.981Z" as Timestamp,
    content: {
      name: "Grace Hopper",
      email: "grace@example.org",
      message: "Found a moth in the relay again. Is on-site support included?"
    }
  },
  {
    createdDate: "2024-03-11T11:02:17.500Z" as Timestamp,
    content: {
      name: "Alan Turing",
      email: "alan@example.net",
      message: "Is the contact form itself Turing complete? Asking for a friend."
    }
  },
  {
    createdDate: "2024-03-18T07:55:30.004Z" as Timestamp,
    content: { name: "Katherine Johnson", email: "katherine@example.com", message: "Please call me back." }
  }
]

/**
 * @since 0.1.0
 */

/**
 * The core's schemas of what the operations on a file send and receive, by their own names: each operation's
 * payload (`GetFileData`, `GetSubmissions`, `GetChanges`, `ExportSubmissions`: `RequestJson`, plain strings and
 * numbers) and replies (`FileData.FileData`, `SubmissionsReply.SubmissionsPage`, `ChangesReply.ChangesPage`).
 *
 * @since 0.3.0
 */
export {
  ChangesReply,
  ExportSubmissions,
  FileData,
  GetChanges,
  GetFileData,
  GetSubmissions,
  SubmissionsReply
} from "@filedata/core"
export * as ApiError from "./ApiError.js"
/**
 * @since 0.1.0
 */
export * as FileDataApi from "./FileDataApi.js"
/**
 * @since 0.1.0
 */
export * as FileDataClient from "./FileDataClient.js"
/**
 * @since 0.2.0
 */
export * as ProblemDocument from "./ProblemDocument.js"
/**
 * @since 0.2.0
 */
export * as ProblemStatus from "./ProblemStatus.js"
/**
 * @since 0.2.0
 */
export * as WebhookVerifier from "./WebhookVerifier.js"

// Reading a file: the use case, its reply and its JSON encoder

/**
 * @since 0.1.0
 */
export * as FileDataEncoder from "./read/FileDataEncoder.js"
/**
 * @since 0.1.0
 */
export * as FileDataReply from "./read/FileDataReply.js"
/**
 * @since 0.1.0
 */
export * as GetFileData from "./read/GetFileData.js"

// The change feed: every created and erased submission of a file in commit order

/**
 * @since 0.3.0
 */
export * as ChangeCursor from "./changes/ChangeCursor.js"
/**
 * @since 0.3.0
 */
export * as ChangesEncoder from "./changes/ChangesEncoder.js"
/**
 * @since 0.3.0
 */
export * as ChangesReply from "./changes/ChangesReply.js"
/**
 * @since 0.3.0
 */
export * as GetChanges from "./changes/GetChanges.js"

// Incremental reads: the use case, its cursor, long-poll waits, its reply and its JSON encoder

/**
 * @since 0.1.0
 */
export * as GetSubmissions from "./sync/GetSubmissions.js"
/**
 * @since 0.1.0
 */
export * as SubmissionCursor from "./sync/SubmissionCursor.js"
/**
 * @since 0.2.0
 */
export * as SubmissionSignals from "./sync/SubmissionSignals.js"
/**
 * @since 0.1.0
 */
export * as SubmissionsEncoder from "./sync/SubmissionsEncoder.js"
/**
 * @since 0.1.0
 */
export * as SubmissionsReply from "./sync/SubmissionsReply.js"
/**
 * @since 0.2.0
 */
export * as WaitingRequests from "./sync/WaitingRequests.js"

// Exports: the use case and its CSV / NDJSON encoder

/**
 * @since 0.2.0
 */
export * as ExportEncoder from "./export/ExportEncoder.js"
/**
 * @since 0.2.0
 */
export * as ExportSubmissions from "./export/ExportSubmissions.js"

// Webhooks: the model, its ports and its use cases

/**
 * @since 0.2.0
 */
export * as CreateWebhook from "./webhooks/CreateWebhook.js"
/**
 * @since 0.2.0
 */
export * as DeliverWebhooks from "./webhooks/DeliverWebhooks.js"
/**
 * @since 0.2.0
 */
export * as ListWebhooks from "./webhooks/ListWebhooks.js"
/**
 * @since 0.2.0
 */
export * as ManageWebhook from "./webhooks/ManageWebhook.js"
/**
 * @since 0.2.0
 */
export * as Webhook from "./webhooks/Webhook.js"
/**
 * @since 0.2.0
 */
export * as WebhookRequest from "./webhooks/WebhookRequest.js"
/**
 * @since 0.2.0
 */
export * as WebhookSecrets from "./webhooks/WebhookSecrets.js"
/**
 * @since 0.2.0
 */
export * as WebhookSender from "./webhooks/WebhookSender.js"
/**
 * @since 0.2.0
 */
export * as WebhookStore from "./webhooks/WebhookStore.js"

// The operator: imports, appends, the operator store and key prefixes

/**
 * @since 0.1.0
 */
export * as ApiKeyPrefix from "./operator/ApiKeyPrefix.js"
/**
 * @since 0.1.0
 */
export * as Append from "./operator/Append.js"
/**
 * @since 0.3.0
 */
export * as Erasure from "./operator/Erasure.js"
/**
 * @since 0.1.0
 */
export * as Fixture from "./operator/Fixture.js"
/**
 * @since 0.2.0
 */
export * as ImportRules from "./operator/ImportRules.js"
/**
 * @since 0.1.0
 */
export * as OperatorStore from "./operator/OperatorStore.js"

// What every feature shares: the domain, its failures, the rules every request obeys, the ports

/**
 * @since 0.2.0
 */
export * as EncodedPages from "./shared/EncodedPages.js"
/**
 * @since 0.1.0
 */
export * as FileData from "./shared/FileData.js"
/**
 * @since 0.1.0
 */
export * as FileDataError from "./shared/FileDataError.js"
/**
 * @since 0.1.0
 */
export * as FileRepository from "./shared/FileRepository.js"
/**
 * @since 0.1.0
 */
export * as FileRequest from "./shared/FileRequest.js"
/**
 * @since 0.2.0
 */
export * as Immediate from "./shared/Immediate.js"
/**
 * @since 0.2.0
 */
export * as JsonTokenizer from "./shared/JsonTokenizer.js"
/**
 * @since 0.2.0
 */
export * as ProblemCode from "./shared/ProblemCode.js"
/**
 * @since 0.1.0
 */
export * as RateLimiter from "./shared/RateLimiter.js"
/**
 * @since 0.2.0
 */
export * as RequestDecoding from "./shared/RequestDecoding.js"
/**
 * @since 0.1.0
 */
export * as RequestLog from "./shared/RequestLog.js"
/**
 * @since 0.2.0
 */
export * as RequestSchema from "./shared/RequestSchema.js"
/**
 * @since 0.1.0
 */
export * as SubmissionEntry from "./shared/SubmissionEntry.js"
/**
 * @since 0.3.0
 */
export * as SubmissionId from "./shared/SubmissionId.js"
/**
 * @since 0.1.0
 */
export * as TextRules from "./shared/TextRules.js"

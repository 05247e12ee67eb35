/**
 * @since 0.1.0
 */
export * as ApiKeyPrefix from "./ApiKeyPrefix.js"
/**
 * @since 0.1.0
 */
export * as Append from "./Append.js"
/**
 * @since 0.2.0
 */
export * as CreateWebhook from "./CreateWebhook.js"
/**
 * @since 0.2.0
 */
export * as DeliverWebhooks from "./DeliverWebhooks.js"
/**
 * @since 0.2.0
 */
export * as ExportSubmissions from "./ExportSubmissions.js"
/**
 * @since 0.1.0
 */
export * as FileData from "./FileData.js"
/**
 * @since 0.1.0
 */
export * as FileDataError from "./FileDataError.js"
/**
 * @since 0.1.0
 */
export * as FileDataJson from "./FileDataJson.js"
/**
 * @since 0.1.0
 */
export * as FileDataReply from "./FileDataReply.js"
/**
 * @since 0.1.0
 */
export * as FileRepository from "./FileRepository.js"
/**
 * @since 0.1.0
 */
export * as FileRequest from "./FileRequest.js"
/**
 * @since 0.1.0
 */
export * as Fixture from "./Fixture.js"
/**
 * @since 0.1.0
 */
export * as GetFileData from "./GetFileData.js"
/**
 * @since 0.1.0
 */
export * as GetSubmissions from "./GetSubmissions.js"
/**
 * @since 0.2.0
 */
export * as Immediate from "./Immediate.js"
/**
 * @since 0.2.0
 */
export * as ListWebhooks from "./ListWebhooks.js"
/**
 * @since 0.2.0
 */
export * as ManageWebhook from "./ManageWebhook.js"
/**
 * @since 0.1.0
 */
export * as OperatorStore from "./OperatorStore.js"
/**
 * @since 0.2.0
 */
export * as ProblemCode from "./ProblemCode.js"
/**
 * @since 0.1.0
 */
export * as RateLimiter from "./RateLimiter.js"
/**
 * @since 0.1.0
 */
export * as RequestLog from "./RequestLog.js"
/**
 * @since 0.1.0
 */
export * as SubmissionCursor from "./SubmissionCursor.js"
/**
 * @since 0.1.0
 */
export * as SubmissionEntry from "./SubmissionEntry.js"
/**
 * @since 0.2.0
 */
export * as SubmissionSignals from "./SubmissionSignals.js"
/**
 * @since 0.2.0
 */
export * as SubmissionsExport from "./SubmissionsExport.js"
/**
 * @since 0.1.0
 */
export * as SubmissionsJson from "./SubmissionsJson.js"
/**
 * @since 0.1.0
 */
export * as SubmissionsReply from "./SubmissionsReply.js"
/**
 * @since 0.1.0
 */
export * as TextRules from "./TextRules.js"
export * as WaitingRequests from "./WaitingRequests.js"
/**
 * @since 0.2.0
 */
export * as Webhook from "./Webhook.js"
/**
 * @since 0.2.0
 */
export * as WebhookRequest from "./WebhookRequest.js"
/**
 * @since 0.2.0
 */
export * as WebhookSecrets from "./WebhookSecrets.js"
/**
 * @since 0.2.0
 */
export * as WebhookSender from "./WebhookSender.js"
/**
 * @since 0.2.0
 */
export * as WebhookStore from "./WebhookStore.js"

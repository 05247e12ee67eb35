/**
 * @since 0.1.0
 */
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
 * @since 0.1.0
 */
export * as Models from "./Models.js"
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

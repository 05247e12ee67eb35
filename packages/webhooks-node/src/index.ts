/**
 * @since 0.2.0
 */
export * as AddressPolicy from "./AddressPolicy.js"
/**
 * @since 0.2.0
 */
export * as HttpWebhookSender from "./HttpWebhookSender.js"
/**
 * @since 0.2.0
 */
export * as SealedSecrets from "./SealedSecrets.js"

/**
 * @since 0.1.0
 */
export * as ApiKeyGenerator from "./ApiKeyGenerator.js"
/**
 * @since 0.1.0
 */
export * as CliError from "./CliError.js"
/**
 * @since 0.1.0
 */
export * as Color from "./Color.js"
/**
 * @since 0.1.0
 */
export * as Commands from "./Commands.js"
/**
 * @since 0.1.0
 */
export * as DemoFixture from "./DemoFixture.js"
/**
 * @since 0.2.0
 */
export * as Program from "./Program.js"
/**
 * @since 0.1.0
 */
export * as Progress from "./Progress.js"
/**
 * @since 0.1.0
 */
export * as Stdin from "./Stdin.js"

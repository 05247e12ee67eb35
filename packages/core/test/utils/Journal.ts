/**
 * A shared, ordered record of what the test doubles were asked to do, so a test can assert the order in
 * which the use case touches its ports (and what it never touched).
 */
export type Journal = Array<string>

export const make = (): Journal => []

import { RateLimiterConformance } from "@filedata/conformance"
import { MemoryRateLimiter } from "../src/index.js"

// Memory counts by Effect's Clock, so the suite runs on the test clock.
RateLimiterConformance.suite("MemoryRateLimiter", MemoryRateLimiter.make, { clock: "test" })

// Module hooks for bench/lib/startup-probe.mjs: every ES module loaded, and what imported it, is reported to the
// main thread.

let port

export const initialize = (data) => {
  port = data.port
}

export const resolve = async (specifier, context, nextResolve) => {
  const result = await nextResolve(specifier, context)
  port.postMessage({ resolved: result.url, parent: context.parentURL })
  return result
}

export const load = async (url, context, nextLoad) => {
  const result = await nextLoad(url, context)
  port.postMessage({ url, format: result.format })
  return result
}

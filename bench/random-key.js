'use strict';
// autocannon `setupRequest` for requests whose spec has `keys` (bench/scenario.ts,
// HttpRequestSpec): every send replaces `{key}` in the path with a uniformly random
// integer below `keys`. A file, not a closure, because autocannon runs in its own worker
// thread (bench/measure.ts) and loads setupRequest there by path.
module.exports = function randomKey(req) {
  const key = String(Math.floor(Math.random() * req.keys));
  return { ...req, path: req.pathTemplate.split('{key}').join(key) };
};

export { Evaluator, GENERIC_SCHEMA, compileGoRegexp, type DatumSchema } from './bexpr.evaluator';
export { parseBexpr } from './bexpr.parser';
export * from './bexpr.types';
export { NumError, goQuote, goUnquote, strconvParseBool, parseGoFloat, parseGoInt, parseGoUint } from './go-strconv';

export { Evaluator, GENERIC_SCHEMA, compileGoRegexp, intOfDouble, type DatumSchema } from './bexpr.evaluator';
export { MAX_RULE_DEPTH, parseBexpr } from './bexpr.parser';
export * from './bexpr.types';
export { NumError, goQuote, goUnquote, strconvParseBool, parseGoFloat, parseGoInt, parseGoUint } from './go-strconv';

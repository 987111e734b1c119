export * from './password';
export * from './constant-time';

export * from './app-error';
export * from './render-error';

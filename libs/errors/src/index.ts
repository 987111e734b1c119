export * from './app-error';
export * from './render-error';
export * from './storage-unavailable';

/**
 * The package entry (`import { definePlugin } from 'engine'`): the API a third-party plugin is
 * written against (docs/plugins.md). Values are only what a plugin calls or throws; everything else
 * is a type, so loading this module loads no plugin and starts nothing.
 */

// Defining a plugin, and the engine its register function receives.
export { definePlugin } from './plugin';
export type { EnginePlugin } from './plugin';
export type { Engine, LoadedPlugin } from './engine';

// Services between plugins: extend EngineServices by declaration merging
// (`declare module 'engine' { interface EngineServices { cache: MyCache } }`). The http service's
// contract is named so that `engine.need('http')` is typed for an outside author.
export type { EngineServices } from './services';
export type { HttpService, UpgradeHandler } from './http-service';

// Errors: named codes defined once (docs/errors.md); handlers throw EngineError.
export { ERRORS, EngineError, isEngineError, toEngineError } from './errors';
export type { ErrorDefinition, ErrorDetails, ErrorId } from './errors';

// The command bus: commands as data, executed with a context naming who asks.
export { SYSTEM_PRINCIPAL } from './auth/principal';
export type { Principal } from './auth/principal';
export type { CommandBus, Authorizer } from './bus/command-bus';
export type { CommandContext, CommandDefinition, Executor, Origin, ParamsSchema, Resource } from './bus/command';

// Metrics (`engine.metrics`): figures read at scrape time and latency histograms (docs/plugins.md).
export type { MetricsRegistry, MetricSource, MetricSample, MetricKind, MetricLabels, Histogram, HistogramDefinition, HistogramSeries, LabelledCounter } from './metrics';

// Readiness (`engine.readiness`): a plugin adds what GET /health/ready needs of it.
export type { Readiness, ReadinessCheck } from './readiness';

// Settings (`engine.settings`, read-only) and the engine's clock.
export type { Port, RoleSetting, Settings } from './settings';
export type { Clock } from './clock';

// The storage port a storage plugin implements (and provides as `storage`), with its message log.
export type * from './storage/storage-port';
export type * from './storage/message-log-port';
export type * from './storage/types';
export type * from './storage/filter-ast';

// The message core's port, provided by the messaging plugin as `messageCore` (typed
// `engine.need('messageCore')`), with the messages, sessions and commands it speaks of.
export type * from './messaging/message-core-port';
export type * from './messaging/message';
export type * from './messaging/session-types';
export type * from './messaging/commands';

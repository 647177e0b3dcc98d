/**
 * "Work was queued": how a request wakes a worker instead of leaving the row for its next poll.
 *
 * In one process it is an event. On PostgreSQL it is also a NOTIFY on `sealpay_work`, and every process whose
 * worker subscribes LISTENs on a connection of its own, so a row queued by one API process is picked up at once by
 * whichever worker process claims it first. The LISTEN connection is re-opened when it drops (workers then poll
 * meanwhile, as they always do), and a reconnection wakes the subscribers once for what may have been missed.
 */
import { EventEmitter } from 'node:events';
import type { Database } from './client.ts';

export const WORK_CHANNEL = 'sealpay_work';
const RECONNECT_MS = 1000;

/**
 * The queues a notification is for (the NOTIFY payload on PostgreSQL): a queued transfer wakes the transaction
 * worker and not the email loop, and the other way round, so neither polls its table for the other's work.
 */
export const WORK_QUEUES = ['transactions', 'email'] as const;
export type WorkQueue = (typeof WORK_QUEUES)[number];

export interface WorkSignal {
  /** Tells this process's loop for `queue` and, on PostgreSQL, every other process's that work was queued. */
  notify(queue: WorkQueue): void;
  /**
   * Calls `listener` on every notification for `queue` (starts listening across processes); returns the
   * unsubscribe.
   */
  subscribe(queue: WorkQueue, listener: () => void): () => void;
  close(): Promise<void>;
}

interface Logger {
  warn(object: object, message: string): void;
}

export function createWorkSignal(database: Database, logger: Logger): WorkSignal {
  const events = new EventEmitter();
  events.setMaxListeners(100);
  const wake = (queue: WorkQueue) => events.emit(queue);
  // After a reconnection every queue may have missed something.
  const wakeAll = () => {
    for (const queue of WORK_QUEUES) wake(queue);
  };
  const onNotification = (payload: string) => {
    const queue = WORK_QUEUES.find((known) => known === payload);
    if (queue) wake(queue);
    else wakeAll();
  };
  const notifications = database.notifications;
  let closed = false;
  let connecting: Promise<void> | null = null;
  let listener: { close(): Promise<void> } | null = null;
  let retry: NodeJS.Timeout | null = null;

  const listen = () => {
    if (!notifications || closed || connecting || listener) return;
    connecting = (async () => {
      try {
        const opened = await notifications.listen(WORK_CHANNEL, onNotification);
        if (closed) {
          await opened.close();
          return;
        }
        listener = opened;
        void opened.lost.then((error) => {
          listener = null;
          if (closed) return;
          logger.warn({ err: error }, 'work notifications: connection lost; reconnecting');
          scheduleRetry();
        });
        wakeAll();
      } catch (error) {
        logger.warn({ err: error }, 'work notifications: cannot LISTEN; workers poll until it can');
        scheduleRetry();
      } finally {
        connecting = null;
      }
    })();
  };
  const scheduleRetry = () => {
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = null;
      listen();
    }, RECONNECT_MS);
    retry.unref();
  };

  return {
    notify(queue) {
      wake(queue);
      notifications?.notify(WORK_CHANNEL, queue).catch((error: unknown) => {
        logger.warn({ err: error }, 'work notification not sent; workers will poll');
      });
    },
    subscribe(queue, onWork) {
      events.on(queue, onWork);
      listen();
      return () => events.off(queue, onWork);
    },
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      await connecting;
      await listener?.close();
      listener = null;
    },
  };
}

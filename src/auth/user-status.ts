/**
 * What happened to a user's standing: deactivated (SCIM `active: false`), reactivated, or
 * deleted. Sign-in sessions and other credentials that are not API keys listen here, so that a
 * deprovisioned user loses them at once; API keys are refused by the key verifier itself.
 */
export interface UserStatusChange {
  organisationId: string;
  userId: string;
  status: 'deactivated' | 'reactivated' | 'deleted';
}

export type UserStatusListener = (change: UserStatusChange) => void | Promise<void>;

export interface UserStatusEvents {
  /** Adds a listener; returns its removal. */
  on(listener: UserStatusListener): () => void;
  /**
   * Runs every listener, in the request that made the change: a listener that fails fails the
   * change (undone with the request's transaction), rather than leaving a user half deprovisioned.
   */
  emit(change: UserStatusChange): Promise<void>;
}

export function createUserStatusEvents(): UserStatusEvents {
  const listeners = new Set<UserStatusListener>();
  return {
    on(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    async emit(change) {
      for (const listener of listeners) await listener(change);
    },
  };
}

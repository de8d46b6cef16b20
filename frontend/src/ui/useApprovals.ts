import { useCallback, useEffect, useRef, useState } from 'react';
import type { Approval, DucklmApi } from '../bridge';
import { freshApprovals, notificationOf } from '../lib/approvals';
import { useThrottled } from './useLoad';

/** NotifyPermission mirrors Notification.permission, or "unsupported". */
export type NotifyPermission = NotificationPermission | 'unsupported';

function permissionNow(): NotifyPermission {
  return typeof Notification === 'undefined' ? 'unsupported' : Notification.permission;
}

// Event types after which the set of open approvals may differ.
const APPROVAL_EVENTS = /^(step\.(approval_requested|approved|denied|started)|run\.(status|completed|failed|cancelled))$/;

/**
 * useApprovals keeps the open approval requests of every run, refreshed when
 * the ledger says they may have changed, and raises one desktop notification
 * per new request when the user allowed notifications.
 */
export function useApprovals(api: DucklmApi, onOpen: (a: Approval) => void) {
  const [approvals, setApprovals] = useState<Approval[]>([]);
  const [permission, setPermission] = useState<NotifyPermission>(permissionNow);
  const seen = useRef<Set<string> | null>(null);
  const onOpenRef = useRef(onOpen);
  onOpenRef.current = onOpen;

  const refresh = useCallback(() => {
    api.approvals().then(
      (list) => {
        // The first answer is what was already waiting: no notification for it.
        const fresh = seen.current === null ? [] : freshApprovals(seen.current, list);
        seen.current = new Set(list.map((a) => a.requestId));
        setApprovals(list);
        if (permissionNow() === 'granted') {
          for (const a of fresh) {
            const n = notificationOf(a);
            try {
              const note = new Notification(n.title, { body: n.body, tag: n.tag });
              note.onclick = () => {
                window.focus();
                onOpenRef.current(a);
              };
            } catch {
              // Some webviews expose Notification but refuse to construct it; the badge still shows.
            }
          }
        }
      },
      () => {
        // The badge is a hint; Home and the run view show the backend's errors.
      },
    );
  }, [api]);

  const throttled = useThrottled(refresh, 400);
  useEffect(() => {
    refresh();
    const off = api.onLedgerEvents((batch) => {
      if (batch.some((e) => APPROVAL_EVENTS.test(e.type))) throttled();
    });
    return off;
  }, [api, refresh, throttled]);

  const askPermission = useCallback(() => {
    if (typeof Notification === 'undefined') return;
    void Notification.requestPermission().then(setPermission, () => setPermission(permissionNow()));
  }, []);

  return { approvals, permission, askPermission, refresh };
}

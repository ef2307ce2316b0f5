import {
  type AnchorHTMLAttributes,
  type MouseEvent,
  type ReactNode,
  useCallback,
  useEffect,
  useId,
  useRef,
  useSyncExternalStore,
} from 'react';

/* A tiny router over the History API: paths are relative to /console. */

const BASE = '/console';
const listeners = new Set<() => void>();

function subscribe(listener: () => void) {
  listeners.add(listener);
  window.addEventListener('popstate', listener);
  return () => {
    listeners.delete(listener);
    window.removeEventListener('popstate', listener);
  };
}

const snapshot = () => window.location.pathname + window.location.search;

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const url = `${BASE}${to}`;
  if (options.replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  for (const l of listeners) l();
  window.scrollTo(0, 0);
}

/** The current console path (without /console) and its query. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const full = useSyncExternalStore(subscribe, snapshot);
  const [pathname = '', search = ''] = full.split('?');
  const rest = pathname.startsWith(BASE) ? pathname.slice(BASE.length) : pathname;
  return { path: rest.replace(/\/+$/, '') || '/', query: new URLSearchParams(search) };
}

export function Link(props: AnchorHTMLAttributes<HTMLAnchorElement> & { to: string }) {
  const { to, onClick, ...rest } = props;
  return (
    <a
      {...rest}
      href={`${BASE}${to}`}
      onClick={(e: MouseEvent<HTMLAnchorElement>) => {
        onClick?.(e);
        if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(to);
      }}
    />
  );
}

/** Sets the document title and moves focus to the page's heading, so that screen readers hear the change. */
export function usePageTitle(title: string) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · Brier console`;
    ref.current?.focus({ preventScroll: true });
  }, [title]);
  return ref;
}

export function PageHeading({ title, children }: { title: string; children?: ReactNode }) {
  const ref = usePageTitle(title);
  return (
    <div className="page-heading">
      <h1 ref={ref} tabIndex={-1}>
        {title}
      </h1>
      {children}
    </div>
  );
}

export function Field(props: {
  label: string;
  error?: string | undefined;
  hint?: ReactNode;
  children: (a11y: { id: string; 'aria-invalid': boolean; 'aria-describedby': string | undefined }) => ReactNode;
}) {
  const id = useId();
  const errorId = `${id}-error`;
  const hintId = `${id}-hint`;
  const describedBy = [props.error ? errorId : '', props.hint ? hintId : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      {props.children({ id, 'aria-invalid': Boolean(props.error), 'aria-describedby': describedBy })}
      {props.hint ? (
        <p className="hint" id={hintId}>
          {props.hint}
        </p>
      ) : null}
      {props.error ? (
        <p className="field-error" id={errorId} role="alert">
          {props.error}
        </p>
      ) : null}
    </div>
  );
}

export function Alert({ kind = 'error', children }: { kind?: 'error' | 'info' | 'success'; children: ReactNode }) {
  return (
    <div className={`alert alert-${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {children}
    </div>
  );
}

/** A modal dialog on <dialog>: focus is trapped by the browser, Escape closes it, focus returns after. */
export function Dialog(props: {
  open: boolean;
  title: string;
  onClose: () => void;
  children: ReactNode;
  labelledBy?: string;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const returnTo = useRef<Element | null>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (props.open && !d.open) {
      returnTo.current = document.activeElement;
      d.showModal();
    } else if (!props.open && d.open) {
      d.close();
    }
  }, [props.open]);
  const { onClose } = props;
  const handleClose = useCallback(() => {
    onClose();
    const el = returnTo.current;
    if (el instanceof HTMLElement) el.focus();
  }, [onClose]);
  return (
    <dialog ref={ref} aria-labelledby={titleId} onClose={handleClose} className="dialog">
      {props.open ? (
        <>
          <h2 id={titleId}>{props.title}</h2>
          {props.children}
        </>
      ) : null}
    </dialog>
  );
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const status = useRef<HTMLSpanElement>(null);
  return (
    <span className="copy">
      <button
        type="button"
        className="secondary"
        onClick={async () => {
          let ok = true;
          try {
            await navigator.clipboard.writeText(text);
          } catch {
            ok = false;
          }
          if (status.current) status.current.textContent = ok ? 'Copied' : 'Copy failed: select the text and copy it';
          setTimeout(() => {
            if (status.current) status.current.textContent = '';
          }, 2500);
        }}
      >
        {label}
      </button>
      <span ref={status} className="copy-status" aria-live="polite" />
    </span>
  );
}

export const formatDate = (iso: string | null) =>
  iso
    ? new Date(iso).toLocaleString(undefined, {
        year: 'numeric',
        month: 'short',
        day: 'numeric',
        hour: '2-digit',
        minute: '2-digit',
      })
    : 'never';

export const formatNumber = (n: number) => n.toLocaleString('en-US');

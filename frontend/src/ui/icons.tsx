// Small inline icons: no icon font or package for a handful of shapes.
import type { SVGProps } from 'react';

type IconProps = SVGProps<SVGSVGElement>;

function Icon({ children, ...props }: IconProps) {
  return (
    <svg
      width="16"
      height="16"
      viewBox="0 0 16 16"
      fill="none"
      stroke="currentColor"
      strokeWidth="1.6"
      strokeLinecap="round"
      strokeLinejoin="round"
      aria-hidden="true"
      focusable="false"
      {...props}
    >
      {children}
    </svg>
  );
}

/** DuckMark is the app's mark: a duck's head in profile. */
export function DuckMark(props: IconProps) {
  return (
    <svg width="22" height="22" viewBox="0 0 24 24" aria-hidden="true" focusable="false" {...props}>
      <circle cx="10.5" cy="11" r="8" fill="var(--duck-yellow)" />
      <path d="M17.2 10.2 L23 11.6 Q20.6 14.6 16.6 13.6 Z" fill="var(--duck-orange)" />
      <circle cx="12.4" cy="8.6" r="1.25" fill="#1f1a10" />
    </svg>
  );
}

export function OkIcon(props: IconProps) {
  return (
    <Icon {...props}>
      <circle cx="8" cy="8" r="6.5" />
      <path d="M5.2 8.2 7.2 10.2 10.9 6" />
    </Icon>
  );
}

export function WarnIcon(props: IconProps) {
  return (
    <Icon {...props}>
      <path d="M8 1.8 14.8 13.6H1.2Z" />
      <path d="M8 6.2v3.4M8 11.6v.1" />
    </Icon>
  );
}

export function FailIcon(props: IconProps) {
  return (
    <Icon {...props}>
      <circle cx="8" cy="8" r="6.5" />
      <path d="M5.8 5.8 10.2 10.2M10.2 5.8 5.8 10.2" />
    </Icon>
  );
}

export function CopyIcon(props: IconProps) {
  return (
    <Icon {...props}>
      <rect x="5.2" y="5.2" width="8.6" height="8.6" rx="1.6" />
      <path d="M10.8 5.2V3.6a1.4 1.4 0 0 0-1.4-1.4H3.6a1.4 1.4 0 0 0-1.4 1.4v5.8a1.4 1.4 0 0 0 1.4 1.4h1.6" />
    </Icon>
  );
}

export function CheckMarkIcon(props: IconProps) {
  return (
    <Icon {...props}>
      <path d="M3.5 8.4 6.6 11.5 12.5 5" />
    </Icon>
  );
}

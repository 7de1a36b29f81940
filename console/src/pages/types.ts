import type { Capability, Me } from '../session.ts';

export interface PageProps {
  me: Me;
}

export interface PageEntry {
  id: string;
  title: string;
  /** What the page is for, shown under its title. */
  lead: string;
  /** The capability its actions need; the page still opens without it, its actions are disabled. */
  capability?: Capability;
  component: (props: PageProps) => preact.JSX.Element;
}

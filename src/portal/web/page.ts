/** A page of the portal: main.ts routes to it, and its own file renders it. */
export type PortalPage = {
  /** The path under /portal/ ('' is the overview). */
  path: string;
  title: string;
  /** Whether the page reads over time: the nav then carries the period along. */
  ranged: boolean;
  render(view: HTMLElement, rerender: () => void): Promise<void>;
};

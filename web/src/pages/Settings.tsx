/** Placeholder: being written. */
export function Settings() {
  return <p>Settings</p>;
}
